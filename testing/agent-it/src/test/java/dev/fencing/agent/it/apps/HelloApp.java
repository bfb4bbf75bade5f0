package dev.fencing.agent.it.apps;

/** Hello world: prints, optionally waits, and returns from main. With the agent attached the JVM must still exit. */
public final class HelloApp {
  private HelloApp() {}

  public static void main(String[] args) throws Exception {
    System.out.println("HELLO");
    if (args.length > 0) {
      Thread.sleep(Long.parseLong(args[0]));
    }
  }
}
