"""stackexchange"""
