"""dialeval.trainers: Trainer subclasses that train for diverse responses (DRESS, unlikelihood)."""
