package dev.fencing.agent.config;

import java.util.ArrayList;
import java.util.List;

/** Which JDK modules this Java runtime lacks (a jlink image or {@code --limit-modules} may leave any out). */
public final class JdkModules {
  private JdkModules() {}

  /** The names in {@code required} that the boot layer does not have, in their order. */
  public static List<String> missing(List<String> required) {
    List<String> missing = new ArrayList<>();
    for (String name : required) {
      if (ModuleLayer.boot().findModule(name).isEmpty()) {
        missing.add(name);
      }
    }
    return List.copyOf(missing);
  }
}
