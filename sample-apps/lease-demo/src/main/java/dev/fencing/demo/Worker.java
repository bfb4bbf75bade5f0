package dev.fencing.demo;

/**
 * Stands for the user's unmodified application: it knows nothing of leases, tokens or the agent, and has no
 * dependency on them. The demo attaches the agent from the command line only, which is the product's promise.
 */
public final class Worker {
  private Worker() {}

  public static void main(String[] args) throws InterruptedException {
    String name = args.length > 0 ? args[0] : "worker";
    for (long batch = 1; ; batch++) {
      Thread.sleep(500);
      System.out.println("worker " + name + ": batch " + batch + " done");
    }
  }
}
