"""(activation: to be written.)"""
__all__ = []
