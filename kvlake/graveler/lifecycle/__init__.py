"""Repository lifecycle: creation and deletion, namespaces, cleaning and retention."""
