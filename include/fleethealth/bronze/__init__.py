"""bronze"""
