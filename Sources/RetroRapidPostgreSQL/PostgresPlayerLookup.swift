import RetroRapidDomain

/// The one check every PostgreSQL repository makes before it acts for a player.
enum PostgresPlayerLookup {
    /// Throws `StoreError.unknownPlayer` unless a player has this id. With `lockingRow`, also
    /// locks the player's row until the transaction ends: the way the backend serialises one
    /// player's competing writes (the last free play, a settings version, one open order), as
    /// SQLite's single writer does for everyone. `FOR NO KEY UPDATE` rather than `FOR UPDATE`:
    /// lockers still queue behind each other, but a row that merely references the player (a
    /// game being recorded, checked by its foreign key) does not wait.
    static func requirePlayer(_ playerID: Int64, in db: PostgresConnection, lockingRow: Bool = false) throws {
        let sql = lockingRow ? "SELECT 1 FROM players WHERE id = $1 FOR NO KEY UPDATE" : "SELECT 1 FROM players WHERE id = $1"
        guard try !db.execute(sql, [playerID]).isEmpty else { throw StoreError.unknownPlayer(field: "playerID") }
    }
}
