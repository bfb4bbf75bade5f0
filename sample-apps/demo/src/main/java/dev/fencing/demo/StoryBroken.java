package dev.fencing.demo;

/** The story did not hold (or could not be told); the message says how, in a sentence. */
final class StoryBroken extends RuntimeException {
  private static final long serialVersionUID = 1L;

  StoryBroken(String message) {
    super(message);
  }

  StoryBroken(String message, Throwable cause) {
    super(message, cause);
  }
}
