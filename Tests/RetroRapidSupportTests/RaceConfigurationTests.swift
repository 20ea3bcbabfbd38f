import Testing
@testable import RetroRapidSupport

/// The race rooms' settings (docs/OPERATIONS.md): defaults, every source, refusals, --help.
@Suite struct RaceConfigurationTests {
    @Test func defaultsAreTheDocumentedOnes() throws {
        let configuration = try ServerConfiguration.load(arguments: [], environment: [:], envFileContents: nil)
        #expect(configuration.standingsIntervalMilliseconds == 500)
        #expect(configuration.raceCountdownSeconds == 3)
        #expect(configuration.raceTimeLimitSeconds == 600)
        #expect(configuration.quickRaceWaitSeconds == 10)
        #expect(configuration.maxRooms == 5000)
    }

    @Test func flagsAndEnvironmentSetThem() throws {
        let configuration = try ServerConfiguration.load(
            arguments: ["--standings-interval-ms", "200", "--race-countdown-seconds", "0", "--max-rooms", "7"],
            environment: ["RETRORAPID_RACE_TIME_LIMIT_SECONDS": "30", "RETRORAPID_QUICK_RACE_WAIT_SECONDS": "1",
                          "RETRORAPID_MAX_ROOMS": "9"],
            envFileContents: "RETRORAPID_STANDINGS_INTERVAL_MS=100\n")
        #expect(configuration.standingsIntervalMilliseconds == 200)
        #expect(configuration.raceCountdownSeconds == 0)
        #expect(configuration.raceTimeLimitSeconds == 30)
        #expect(configuration.quickRaceWaitSeconds == 1)
        #expect(configuration.maxRooms == 7)
    }

    @Test(arguments: [
        ("--standings-interval-ms", "10"), ("--race-countdown-seconds", "61"), ("--race-time-limit-seconds", "5"),
        ("--quick-race-wait-seconds", "-1"), ("--max-rooms", "0"), ("--max-rooms", "many"),
    ])
    func outOfRangeValuesAreRefusedNamingTheFlag(flag: String, value: String) {
        do {
            _ = try ServerConfiguration.load(arguments: [flag, value], environment: [:], envFileContents: nil)
            Issue.record("\(flag) \(value) was taken")
        } catch let error as ConfigurationError {
            #expect(error.source == .flag(flag))
            #expect(error.message.hasPrefix(flag))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func helpListsEveryRaceSetting() {
        for flag in ["--standings-interval-ms", "--race-countdown-seconds", "--race-time-limit-seconds",
                     "--quick-race-wait-seconds", "--max-rooms"] {
            #expect(ServerConfiguration.helpText.contains(flag))
        }
        #expect(ServerConfiguration.helpText.contains("RETRORAPID_STANDINGS_INTERVAL_MS"))
    }
}
