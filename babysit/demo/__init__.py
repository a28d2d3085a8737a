"""`babysit demo`: a synthetic training process that goes bad, watched live."""
