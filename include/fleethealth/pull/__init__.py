"""pull"""
