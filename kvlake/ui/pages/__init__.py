"""One module per area of the UI; `kvlake/ui/site.py` registers them."""
