"""gold/facts"""
