"""Text utilities every stage may use: sentences, normalising, names, stems; a leaf."""
