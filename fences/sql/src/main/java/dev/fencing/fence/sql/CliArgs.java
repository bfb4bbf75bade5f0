package dev.fencing.fence.sql;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Command-line options of the fence commands ({@code sql ...}, {@code fence reset ...}): one parser, one set of errors. */
public final class CliArgs {
  private CliArgs() {}

  /**
   * Parses {@code --flag}, {@code --option value} and {@code --option=value}; each option at most once. With
   * {@code keyValues} non-null, bare {@code key=value} arguments (agent settings) are collected there; without, they
   * are unknown arguments.
   *
   * @throws IllegalArgumentException naming the argument that is wrong and what was expected
   */
  public static Map<String, String> parse(List<String> args, Set<String> flags, Set<String> options,
      List<String> keyValues) {
    Map<String, String> parsed = new HashMap<>();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (keyValues != null && !arg.startsWith("--")) {
        if (arg.indexOf('=') <= 0) {
          throw new IllegalArgumentException("unexpected argument '" + arg + "': expected key=value or an --option");
        }
        keyValues.add(arg);
        continue;
      }
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        value = arg.substring(eq + 1);
        arg = arg.substring(0, eq);
      }
      if (flags.contains(arg)) {
        if (value != null) {
          throw new IllegalArgumentException(arg + " takes no value");
        }
        parsed.put(arg, "true");
      } else if (options.contains(arg)) {
        if (value == null) {
          if (i + 1 >= args.size() || args.get(i + 1).startsWith("--")) {
            throw new IllegalArgumentException(arg + " needs a value");
          }
          value = args.get(++i);
        }
        if (parsed.put(arg, value) != null) {
          throw new IllegalArgumentException(arg + " given twice");
        }
      } else {
        throw new IllegalArgumentException("unknown argument '" + arg + "'");
      }
    }
    return parsed;
  }
}
