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
}
