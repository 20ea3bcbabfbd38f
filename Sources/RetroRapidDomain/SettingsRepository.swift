import Foundation

/// Each player's settings document. Versions guard against lost updates: every write names the
/// version it was based on, and only a write based on the current version is stored, with the
/// version plus one. Version 0 means "nothing stored": the defaults are returned.
/// Invalid input is refused with `StoreError(.invalid)` naming the field; an unknown player
/// is `StoreError(.notFound)`.
public protocol SettingsRepository {
    func settings(playerID: Int64) throws -> VersionedSettings

    func write(playerID: Int64, document: PlayerSettings, basedOnVersion: Int, now: Date) throws -> SettingsWriteResult

    func write(playerID: Int64, json: Data, basedOnVersion: Int, now: Date) throws -> SettingsWriteResult

    func patch(playerID: Int64, json: Data, basedOnVersion: Int, now: Date) throws -> SettingsWriteResult
}
