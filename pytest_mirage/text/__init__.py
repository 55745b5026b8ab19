"""Language-aware text processing shared by metrics, retrieval and the extractive baseline."""
