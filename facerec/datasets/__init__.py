"""Labelled face folders for evaluation and training: folder-per-identity listing and the seeded hold-out
(folders), the aligned-face cache built once per dataset (cache), and the protocol's training identities
(training_identities). Runtime galleries never import this."""
