/// One fuzz target: what an input is fed to, and what must hold of the answer beyond "does
/// not crash", so that a logic bug stops the fuzzer as a memory error does (docs/FUZZING.md).
///
/// The same `check` runs in three places: under libFuzzer (`fuzz-<name>` built with
/// `-DFUZZING`, scripts/fuzz.sh), in the replay tool (`fuzz-<name>` built normally, to
/// reproduce a crash file), and over the committed seed corpus in FuzzCorpusTests.
public protocol FuzzTarget: Sendable {
    /// The `<name>` in `fuzz-<name>`, Tests/Fuzz/corpus/<name>/ and `FUZZ_TARGETS`.
    static var name: String { get }
    /// Every outcome `check` reports; the seed corpus must reach each one (FuzzCorpusTests).
    static var outcomes: Set<String> { get }
    /// Feeds `input` to the code under test and returns its outcome (one of `outcomes`);
    /// throws when a property does not hold.
    static func check(_ input: [UInt8]) throws(PropertyViolation) -> String
}

/// A property of a fuzz target that an input broke.
public struct PropertyViolation: Error, CustomStringConvertible {
    public let property: String

    public init(_ property: String) {
        self.property = property
    }

    public var description: String { "property violated: \(property)" }
}

/// The targets `make fuzz` runs, in order; each is also named in Package.swift's `fuzzTargets`.
public let allFuzzTargets: [any FuzzTarget.Type] = [
    ClientMessageFuzzTarget.self,
    SettingsFuzzTarget.self,
    PromoCodeFuzzTarget.self,
    InputLogFuzzTarget.self,
    DisplayNameFuzzTarget.self,
    HTTPQueryFuzzTarget.self,
    FragmentAssemblyFuzzTarget.self,
    MoveMessageFuzzTarget.self,
    CheckpointSliceFuzzTarget.self,
]
