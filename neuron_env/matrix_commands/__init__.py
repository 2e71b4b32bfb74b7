"""matrix_commands"""
