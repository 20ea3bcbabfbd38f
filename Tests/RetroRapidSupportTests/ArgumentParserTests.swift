import Testing
import RetroRapidSupport

@Suite struct ArgumentParserTests {
    @Test func acceptsValueAfterSpaceOrEquals() throws {
        let parsed = try ParsedArguments(["--seeds", "40", "--bot=perfect"], valueOptions: ["seeds", "bot"])
        #expect(parsed.value("seeds") == "40")
        #expect(parsed.value("bot") == "perfect")
    }

    @Test func equalsFormKeepsEverythingAfterTheFirstEqualsSign() throws {
        let parsed = try ParsedArguments(["--query=a=b", "--empty="], valueOptions: ["query", "empty"])
        #expect(parsed.value("query") == "a=b")
        #expect(parsed.value("empty") == "")
    }

    @Test func optionsNotGivenAreNilOrFalse() throws {
        let parsed = try ParsedArguments([], booleanFlags: ["json"], valueOptions: ["seeds"])
        #expect(parsed.value("seeds") == nil)
        #expect(parsed.flag("json") == false)
    }

    @Test func booleanFlagsDoNotConsumeTheNextArgument() throws {
        let parsed = try ParsedArguments(["--json", "replay.txt"], booleanFlags: ["json"], valueOptions: [])
        #expect(parsed.flag("json"))
        #expect(parsed.positionals == ["replay.txt"])
    }

    @Test func positionalsKeepTheirOrderAroundOptions() throws {
        let parsed = try ParsedArguments(["a", "--seeds", "3", "b", "-", "c"], valueOptions: ["seeds"])
        #expect(parsed.positionals == ["a", "b", "-", "c"])
        #expect(parsed.value("seeds") == "3")
    }

    @Test func doubleDashMakesEverythingAfterItPositional() throws {
        let parsed = try ParsedArguments(["--json", "--", "--seeds", "-x", "--json"], booleanFlags: ["json"], valueOptions: ["seeds"])
        #expect(parsed.flag("json"))
        #expect(parsed.value("seeds") == nil)
        #expect(parsed.positionals == ["--seeds", "-x", "--json"])
    }

    @Test func negativeNumbersAreValuesAndPositionalsNotOptions() throws {
        let parsed = try ParsedArguments(["--offset", "-5", "-2.5"], valueOptions: ["offset"])
        #expect(parsed.value("offset") == "-5")
        #expect(parsed.positionals == ["-2.5"])
    }

    @Test func unknownLongOptionThrows() {
        #expect(throws: ArgumentError.unknownOption("sedes")) {
            try ParsedArguments(["--sedes", "3"], valueOptions: ["seeds"])
        }
    }

    @Test func unknownShortOptionThrowsWithItsDash() {
        #expect(throws: ArgumentError.unknownOption("-h")) {
            try ParsedArguments(["-h"], valueOptions: ["seeds"])
        }
        #expect(ArgumentError.unknownOption("-h").description == "unknown option -h")
    }

    @Test func valueOptionAtTheEndIsMissingItsValue() {
        #expect(throws: ArgumentError.missingValue("seeds")) {
            try ParsedArguments(["--seeds"], valueOptions: ["seeds"])
        }
    }

    @Test func valueOptionFollowedByAnotherOptionIsMissingItsValue() {
        #expect(throws: ArgumentError.missingValue("seeds")) {
            try ParsedArguments(["--seeds", "--json"], booleanFlags: ["json"], valueOptions: ["seeds"])
        }
    }

    @Test func repeatedValueOptionThrows() {
        #expect(throws: ArgumentError.repeated("seeds")) {
            try ParsedArguments(["--seeds", "1", "--seeds=2"], valueOptions: ["seeds"])
        }
    }

    @Test func repeatedBooleanFlagThrows() {
        #expect(throws: ArgumentError.repeated("json")) {
            try ParsedArguments(["--json", "--json"], booleanFlags: ["json"], valueOptions: [])
        }
    }

    @Test func booleanFlagGivenAValueThrows() {
        #expect(throws: ArgumentError.invalidValue("json", "yes", "no value")) {
            try ParsedArguments(["--json=yes"], booleanFlags: ["json"], valueOptions: [])
        }
    }

    @Test func intParsesInRangeAndFallsBackToDefault() throws {
        let parsed = try ParsedArguments(["--seeds", "250"], valueOptions: ["seeds", "ticks"])
        #expect(try parsed.int("seeds", default: 1, range: 1...1_000_000) == 250)
        #expect(try parsed.int("ticks", default: 600) == 600)
    }

    @Test func intRejectsTextWithTheExpectedRangeInTheMessage() throws {
        let parsed = try ParsedArguments(["--seeds", "x"], valueOptions: ["seeds"])
        let error = #expect(throws: ArgumentError.self) { try parsed.int("seeds", default: 1, range: 1...1_000_000) }
        #expect(error == .invalidValue("seeds", "x", "a whole number from 1 to 1000000"))
        #expect(error?.description == "--seeds expects a whole number from 1 to 1000000, got 'x'")
    }

    @Test func intRejectsOutOfRangeValues() throws {
        let parsed = try ParsedArguments(["--seeds=0"], valueOptions: ["seeds"])
        #expect(throws: ArgumentError.invalidValue("seeds", "0", "a whole number from 1 to 1000000")) {
            try parsed.int("seeds", default: 1, range: 1...1_000_000)
        }
    }

    @Test func intWithoutRangeStillRejectsFractions() throws {
        let parsed = try ParsedArguments(["--ticks", "1.5"], valueOptions: ["ticks"])
        #expect(throws: ArgumentError.invalidValue("ticks", "1.5", "a whole number")) {
            try parsed.int("ticks", default: 0)
        }
    }

    @Test func stringChecksTheAllowedList() throws {
        let good = try ParsedArguments(["--bot", "cues"], valueOptions: ["bot"])
        #expect(try good.string("bot", default: "perfect", allowed: ["perfect", "cues", "random"]) == "cues")

        let bad = try ParsedArguments(["--bot", "smart"], valueOptions: ["bot"])
        let error = #expect(throws: ArgumentError.self) {
            try bad.string("bot", default: "perfect", allowed: ["perfect", "cues", "random"])
        }
        #expect(error?.description == "--bot expects one of perfect, cues, random, got 'smart'")
    }

    @Test func stringFallsBackToDefault() throws {
        let parsed = try ParsedArguments([], valueOptions: ["bot"])
        #expect(try parsed.string("bot", default: "perfect", allowed: ["perfect", "cues"]) == "perfect")
    }

    @Test func errorMessagesNameTheOptionWithDashes() {
        #expect(ArgumentError.unknownOption("sedes").description == "unknown option --sedes")
        #expect(ArgumentError.missingValue("seeds").description == "--seeds needs a value")
        #expect(ArgumentError.repeated("seeds").description == "--seeds was given more than once")
    }
}

/// Older option names kept working (`--database` for `--database-path`), read under the new name.
@Suite struct ArgumentAliasTests {
    static let options: Set<String> = ["database-path", "migrations-path"]
    static let aliases = ["database": "database-path", "migrations": "migrations-path"]

    @Test func anOldNameFillsTheOptionItNowSpells() throws {
        let old = try ParsedArguments(["--database", "a.sqlite", "--migrations=M"], valueOptions: Self.options, aliases: Self.aliases)
        let new = try ParsedArguments(["--database-path", "a.sqlite", "--migrations-path=M"], valueOptions: Self.options, aliases: Self.aliases)
        #expect(old.value("database-path") == "a.sqlite" && old.value("migrations-path") == "M")
        #expect(new.value("database-path") == "a.sqlite" && new.value("migrations-path") == "M")
    }

    @Test func theOldAndNewNameTogetherAreOneOptionGivenTwice() {
        #expect(throws: ArgumentError.repeated("database-path")) {
            try ParsedArguments(["--database-path", "a", "--database", "b"], valueOptions: Self.options, aliases: Self.aliases)
        }
    }

    @Test func aMissingValueIsReportedUnderTheNameTyped() {
        #expect(throws: ArgumentError.missingValue("database")) {
            try ParsedArguments(["--database"], valueOptions: Self.options, aliases: Self.aliases)
        }
    }

    @Test func withoutTheAliasTheOldNameIsUnknown() {
        #expect(throws: ArgumentError.unknownOption("database")) {
            try ParsedArguments(["--database", "a"], valueOptions: Self.options)
        }
    }
}
