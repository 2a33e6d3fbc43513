"""The Chroma store: open, sync, lock; embeddings and the arrays saved beside it."""
