"""Reading papers: formats, titles, chunking."""
