"""Items after the spider: pipelines and feed exports."""
