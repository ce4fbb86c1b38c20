"""File formats facerec writes and reads: the portable gallery file (`archive`), read without trusting it."""
