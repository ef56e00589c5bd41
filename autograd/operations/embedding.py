"""(embedding: to be written.)"""
__all__ = []
