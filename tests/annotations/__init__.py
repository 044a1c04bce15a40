"""Tests of the annotations package (the audit drawing)."""
