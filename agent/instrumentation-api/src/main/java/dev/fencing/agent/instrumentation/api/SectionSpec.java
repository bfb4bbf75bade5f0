package dev.fencing.agent.instrumentation.api;

/**
 * One declared section of {@code fencing.sections}: every method named {@code method} (all overloads) of the class
 * {@code className} (binary name, {@code $} for a nested class) runs in the scope of {@code lock}.
 */
public record SectionSpec(String className, String method, String lock) {
  /** The key of the section table the advice looks up: {@code <class>.<method>}. */
  public String origin() {
    return className + "." + method;
  }

  /** As written in the configuration: {@code <class>#<method>@<lock>}. */
  @Override
  public String toString() {
    return className + "#" + method + "@" + lock;
  }
}
