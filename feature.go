package mediagen

// FeatureVoiceClone is the pricing key of voice cloning, which is not a
// generation's feature: clones are made with client.CloneVoice.
const FeatureVoiceClone Feature = "audio/voice-clone"
