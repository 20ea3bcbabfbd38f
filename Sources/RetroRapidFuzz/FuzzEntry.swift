import Foundation
#if FUZZING
import CLibFuzzer
#endif

/// The two entry points a `fuzz-<name>` executable has (Sources/Fuzz/<name>).
public enum FuzzEntry {
    #if FUZZING
    /// Hands the process to libFuzzer's driver (its flags and corpus folders are the command
    /// line), which calls `testOneInput` (through a C function per target) for every input.
    public static func runLibFuzzer(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
    }
    #endif

    /// libFuzzer's call for one input. A broken property stops the process with its
    /// description, which libFuzzer records as a crash and saves the input for.
    public static func testOneInput<Target: FuzzTarget>(_ target: Target.Type, _ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        do {
            _ = try Target.check(input)
        } catch {
            fatalError("fuzz-\(Target.name): \(error)")
        }
        return 0
    }

    /// The executable built without `-DFUZZING`: runs every file named on the command line (a
    /// folder: every file in it) through `check`, prints how many inputs had each outcome,
    /// and exits 1 at the first broken property, naming the file. No fuzzer runtime needed,
    /// so a crash file from `make fuzz` can be replayed in a debug build under a debugger.
    public static func replay<Target: FuzzTarget>(_ target: Target.Type, arguments: [String] = CommandLine.arguments) -> Never {
        let paths = arguments.dropFirst()
        guard !paths.isEmpty else {
            print("usage: fuzz-\(Target.name) FILE|FOLDER...  (replays inputs through the checks; see docs/FUZZING.md)")
            exit(2)
        }
        var counts: [String: Int] = [:]
        for path in paths {
            for file in files(at: path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    print("fuzz-\(Target.name): cannot read \(file)")
                    exit(2)
                }
                do {
                    counts[try Target.check(Array(data)), default: 0] += 1
                } catch {
                    print("fuzz-\(Target.name): \(file): \(error)")
                    exit(1)
                }
            }
        }
        let summary = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print("fuzz-\(Target.name): \(counts.values.reduce(0, +)) inputs, every property held (\(summary))")
        exit(0)
    }

    /// A file, or the regular files in a folder (not recursive), sorted.
    public static func files(at path: String) -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { path + "/" + $0 }.filter { file in
            var isSubfolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: file, isDirectory: &isSubfolder) && !isSubfolder.boolValue
        }
    }
}
