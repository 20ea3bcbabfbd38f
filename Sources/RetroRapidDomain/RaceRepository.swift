/// Finished races (`races`, `race_entries`): the finish order and scores of every racer,
/// beside their games (each racer's game is stored and counts on the boards as any game).
public protocol RaceRepository {
    /// Stores a finished race and its entries in one transaction and returns it with its new
    /// public id. Refused (`.invalid`, nothing stored) when an entry names a game that is not
    /// stored, or not that player's, or not of the race's level.
    @discardableResult
    func record(_ race: NewRace) throws -> RaceRecord

    /// The race with this public id, or nil.
    func race(publicID: String) throws -> RaceRecord?

    /// The public id of the race each of these games was part of (games in no race are left out).
    func raceIDs(forGames gameIDs: [String]) throws -> [String: String]
}
