"""File formats facerec writes and reads: the portable gallery file (`archive`), read without trusting it, and face
tags as photo managers keep them (`face_tags`, MWG regions in XMP)."""
