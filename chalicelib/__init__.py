"""Crossover: all application logic. `app.py` only wires routes and event sources to this package."""
