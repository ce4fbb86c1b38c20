"""A photo library beside the gallery: its files as the library commands read them, and a grouped run's groups
of people not enrolled as the CLI, the REST API and the page show, name, add and dismiss them (#66)."""
