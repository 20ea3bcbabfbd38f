/// What compiles SQL into a ``Statement``: a ``Database``, or a cache of statements over one
/// (``SQLiteExecutor``), so helpers shared by repositories take either.
protocol StatementPreparing {
    func prepare(_ sql: String) throws -> Statement
}

extension Database: StatementPreparing {}
