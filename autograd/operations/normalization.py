"""(normalization: to be written.)"""
__all__ = []
