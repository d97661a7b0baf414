"""ImageBERT trainer: config, modules, heads, data loading, multi-stage training, retrieval eval."""
