"""The operation library: one module per family; each op is an Operation subclass plus a
lower-case function. Public names are exported from ``autograd`` itself."""
