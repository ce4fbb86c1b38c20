"""Who may see and change a gallery: the admin password with its lockout (admin) and REST API keys
(api_keys). Faces, names and embeddings are biometric data; every interface asks these before answering."""
