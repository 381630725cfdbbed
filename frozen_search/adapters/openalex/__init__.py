"""openalex"""
