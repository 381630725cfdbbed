"""arxiv"""
