"""Helpers the lessons import: graph drawing, widgets and the hand-vs-.grad comparison."""
