"""The API's wire models: JSON shapes of lakeFS's /api/v1, separate from stored records."""
