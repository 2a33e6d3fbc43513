"""Finding the passages that answer a question: lexical, dense, fused."""
