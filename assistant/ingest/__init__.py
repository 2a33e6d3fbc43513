"""Reading papers: corpus formats, titles, chunking, token counts."""
