"""container"""
