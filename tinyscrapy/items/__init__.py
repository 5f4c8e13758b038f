"""Items after the spider: declared items and loaders, pipelines and feed exports."""
