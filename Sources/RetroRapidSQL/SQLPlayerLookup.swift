import RetroRapidDomain

/// The one check every repository makes before it acts for a player.
public enum SQLPlayerLookup {
    /// Throws `StoreError.unknownPlayer` unless a player has this id. With `lockingRow`, also
    /// locks the player's row until the transaction ends: how PostgreSQL serialises one
    /// player's competing writes (the last free play, one open order), as SQLite's single
    /// writer does for everyone (`SQLDialect.lockingReadKeepingKey`).
    public static func requirePlayer(_ playerID: Int64, in db: any SQLExecutor, lockingRow: Bool = false) throws {
        let lock = lockingRow ? db.dialect.lockingReadKeepingKey : ""
        guard try !db.query("SELECT 1 AS found FROM players WHERE id = $1\(lock)", [playerID]).isEmpty else {
            throw StoreError.unknownPlayer(field: "playerID")
        }
    }

    /// Locks the player's row until the transaction ends, as a writer of it does
    /// (`SQLDialect.lockingRead`: PostgreSQL's `FOR UPDATE`; SQLite's write lock is already
    /// held), for the rules that read a player's rows and then write on that reading (a
    /// settings version, the count of active devices, link codes). False when no player has
    /// this id; the caller says what that means.
    @discardableResult
    public static func lockPlayer(_ playerID: Int64, in db: any SQLExecutor) throws -> Bool {
        try !db.query("SELECT 1 AS found FROM players WHERE id = $1\(db.dialect.lockingRead)", [playerID]).isEmpty
    }
}
