"""Tests of autograd.utils."""
