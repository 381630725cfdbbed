"""wikipedia"""
