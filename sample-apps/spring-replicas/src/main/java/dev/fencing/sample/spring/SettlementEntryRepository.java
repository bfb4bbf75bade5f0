package dev.fencing.sample.spring;

import org.springframework.data.jpa.repository.JpaRepository;

public interface SettlementEntryRepository extends JpaRepository<SettlementEntry, Long> {}
