"""Finding the papers for a question: lexical, dense, fusion."""
