package dev.fencing.sample.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * An ordinary replicated Spring Boot service with no fencing code: each replica serves orders over HTTP and runs
 * the settlement job on its schedule. Which replica's job may write is decided outside the code (the agent's
 * configuration), which is the point of the sample.
 */
@SpringBootApplication
@EnableScheduling
public class SpringReplicasApplication {
  public static void main(String[] args) {
    SpringApplication.run(SpringReplicasApplication.class, args);
  }
}
